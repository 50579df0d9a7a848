"""The optimal value E*(mu) of the inhibitory SVM along mu.

ISVM's Theorem 1 says mu = 1/L is optimal; this fits the inhibitory machine at fixed mu from
mu L = -2 to 4 on iris (linear kernel, C = 0.1) and plots the optimal primal value with its limit
as |mu| grows (the figure of `msvm verify --plots DIR`): 1/L is where E* is largest.
"""

from sklearn.datasets import load_iris

from msvm.verify.inhibition import plot, profile

X, y = load_iris(return_X_y=True)
result = profile(X, y, C=0.1, kernel="linear", n_points=13, dataset="iris")
print(result.summary())
plot([result], "mu_profile.png")
