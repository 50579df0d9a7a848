"""The kernel-PCA basis of MKPM (33-35): the top eigenpairs of the Gram matrix, exact or partial,
or of a Nystroem approximation of it (MKPM §3).

MKPM only ever uses the leading components: column l of the code takes the first d_l of them
(MKPM 17), so a basis of K components serves every allocation with d_l <= K.  The full
eigendecomposition (O(N^3)) is then wasted work beyond the K-th component.  ``top_eigenpairs``
computes the K largest eigenpairs by one of

- ``"dense"``: LAPACK's ``syevr`` on the index range N-K..N-1 (``scipy.linalg.eigh``'s
  ``subset_by_index``; the whole ``numpy.linalg.eigh`` when K = N), exact;
- ``"arpack"``: implicitly restarted Lanczos (``scipy.sparse.linalg.eigsh``), exact to machine
  precision, fast for K << N;
- ``"randomized"``: a randomized range finder with power iterations (Halko, Martinsson & Tropp
  2011; scikit-learn's ``randomized_svd``) followed by Rayleigh quotients, approximate in the
  trailing components; it finds the K largest in modulus, so on an indefinite (precomputed)
  matrix the negative ones among them are dropped and fewer than K may remain.

With Nystroem, m landmark points give explicit features phi~(x) = k(x, landmarks) U S^-1/2,
whose thin SVD (from the eigenpairs of phi~^T phi~) gives the basis: O(N m^2 + m^3) time and
O(N m) memory.

With sample weights s (all > 0) the basis is that of the weighted (uncentred) covariance
C_s = sum_i s_i phi(x_i) phi(x_i)^T / sum_i s_i, MKPM (33) with pattern i counted s_i times:
its eigenvectors are psi_k = Phi S^1/2 a_k / sqrt(gamma_k) for the eigenpairs (a_k, gamma_k) of
the weighted Gram matrix S^1/2 K S^1/2 (S = diag(s)), so every eigensolver above serves
unchanged, and with Nystroem the SVD is that of S^1/2 phi~.  ``A`` then holds the a_k (orthonormal
columns: the weighted least squares of MKPM (36) in these coordinates is the unweighted one of
the targets S^1/2 y).  The landmarks stay uniformly drawn, unweighted.

Centred (``centre=True``, MKPMClassifier's ``fit_intercept``): the basis is that of the
covariance of the centred features phi(x) - mu, mu = sum_i s_i phi(x_i) / sum_i s_i (s = 1
without weights), the usual kernel PCA (Schoelkopf et al. 1998, MKPM's reference [13]) where
MKPM (33) does not centre.  With H = I - 1 s^T / sum_i s_i the Gram matrix of the centred
training points is H K H^T, entry (i, j) K_ij - m_i - m_j + c with m_i = <phi(x_i), mu> =
(K s)_i / sum_i s_i and c = <mu, mu> = s^T m / sum_i s_i, and the eigenpairs are those of
S^1/2 H K H^T S^1/2 (= P S^1/2 K S^1/2 P with the projector P = I - s^1/2 s^1/2^T / sum_i s_i: the
eigenvectors of positive eigenvalue are orthogonal to s^1/2, its null direction falls under the
cutoff).  A new point's centred kernel column is (k(x, X) - m^T) H^T, so its scores are

    z(x) = (k(x, X) - m^T) H^T S^1/2 A Gamma^-1/2 = k(x, X) T - m^T T,   T = H^T S^1/2 A Gamma^-1/2,

``to_scores`` = T and ``offset`` = m^T T (the usual kernel-PCA test centring; H^T is applied
explicitly, not dropped because A is orthogonal to s^1/2 in exact arithmetic).  The training
scores are weighted-centred: sum_i s_i z(x_i) = 0.  With Nystroem what is centred is the
landmark features phi~(x_i) of the N training points (not the landmarks): phi~ - mu~ with
mu~ = sum_i s_i phi~(x_i) / sum_i s_i, the weighted mean over all training points.  phi~(x) is
the orthogonal projection of phi(x) onto the span of the landmarks' features (in coordinates), so
mu~ is the projection of mu and the centred features are the projections of phi(x) - mu: the
Nystroem approximation of the centred kernel (exact when every point is a landmark).  Then
``to_scores`` = U S^-1/2 W and ``offset`` = mu~ W.  Without centring ``offset`` is None.

An MKPM fit whose eigenproblem is at most ``SERIAL_UP_TO`` = 1000 wide (the landmarks, or N for
the exact basis) runs BLAS on one thread: at these sizes threads gain little, and on a
loaded machine OpenBLAS's waiting threads spin, which measured 1.6 CPU s against 0.007 s for
the eigendecomposition of 314 digits landmarks with two threads against one (load average 7 on
2 cores).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import eigsh
from sklearn.utils.extmath import randomized_svd

from msvm.core.kernels import kernel_matrix, kernel_times
from msvm.core.validation import check_finite, gram_eigh

EIGEN_CUTOFF = 1e-10  # components with gamma_k <= EIGEN_CUTOFF * gamma_1 are dropped
EIGEN_SOLVERS = ("auto", "dense", "arpack", "randomized")
SERIAL_UP_TO = 1000  # fits whose eigenproblem is at most this wide run BLAS on one thread


def choose_eigen_solver(n_samples: int, n_top: int) -> str:
    """The solver ``"auto"`` picks for the top ``n_top`` of ``n_samples`` eigenpairs: the dense
    solver when more than a fifth of the spectrum is wanted or the matrix is small (measured on
    digits, N = 1257: syevr for K = 250 costs 0.26 s, randomized 0.21 s, full eigh 0.28 s; for
    K = 100 randomized costs half of syevr), else the randomized one."""
    if n_samples <= 500 or 5 * n_top >= n_samples:
        return "dense"
    return "randomized"


def _dense_top(K, k):
    N = K.shape[0]
    if k >= N:
        return gram_eigh(K)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            s, V = scipy.linalg.eigh(K, subset_by_index=[N - k, N - 1], driver="evr")
    except (np.linalg.LinAlgError, ValueError) as error:
        raise ValueError(
            f"The Gram matrix cannot be factored ({error}); rescale the features."
        ) from None
    check_finite("The Gram matrix's eigendecomposition", s, V)
    return s, V


def top_eigenpairs(K, k: int, solver: str, rng):
    """The (at most) ``k`` largest eigenpairs of the symmetric matrix ``K``, eigenvalues in
    descending order, keeping those above ``EIGEN_CUTOFF`` times the largest (none when the
    largest is <= 0).  ``rng`` (a ``RandomState``) seeds ARPACK's start vector and the
    randomized sketch.  Returns ``(gamma (K',), A (N, K'))``."""
    N = K.shape[0]
    k = min(k, N)
    if solver == "auto":
        solver = choose_eigen_solver(N, k)
    check_finite("The Gram matrix", K)
    if k == 0:
        s, V = np.zeros(0), np.zeros((N, 0))
    elif solver == "arpack" and k < N - 1:  # eigsh needs k < N; k = N - 1 is as dear as dense
        v0 = rng.uniform(-1.0, 1.0, N)
        s, V = eigsh(K, k=k, which="LA", v0=v0)
    elif solver == "randomized" and k < N:
        U, _, _ = randomized_svd(K, k, n_oversamples=max(10, k // 10), random_state=rng)
        # singular vectors of a symmetric K are eigenvectors up to sign; the Rayleigh quotient
        # gives the eigenvalue with its sign (an indefinite precomputed K has negative ones)
        s, V = np.einsum("ij,ij->j", U, K @ U), U
    else:
        s, V = _dense_top(K, k)
    order = np.argsort(s)[::-1]
    s, V = s[order], V[:, order]
    keep = s > EIGEN_CUTOFF * max(s[0] if s.size else 0.0, 0.0)
    return s[keep], V[:, keep]


class KernelPCABasis:
    """The kernel-PCA scores z_k(x) of MKPM (33-35), exact or by Nystroem landmarks.

    ``n_top`` components at most are kept (None: all above the cutoff).  ``n_landmarks`` is
    None for the exact basis (the Gram matrix of every training point), else the number of
    Nystroem landmarks, drawn without replacement by ``rng``.  ``weights`` (N,), all > 0, or
    None: the basis of the weighted covariance (module docstring); then ``training_scores``
    holds z(x_i) for the training points (computed directly, not as A_i / sqrt(s_i)).
    ``centre``: the basis of the (weighted-)centred features phi(x) - mu (module docstring);
    False (default) is MKPM's uncentred basis (33).
    """

    def __init__(
        self,
        X,
        kernel,
        gamma,
        degree,
        coef0,
        n_top,
        rng,
        *,
        eigen_solver="dense",
        n_landmarks=None,
        weights=None,
        centre=False,
    ):
        self.params = (kernel, gamma, degree, coef0)
        N = X.shape[0]
        root = None if weights is None else np.sqrt(weights)
        # the weights of the mean mu, or None (no centring)
        mass = (np.ones(N) if weights is None else weights) if centre else None
        self.offset = None
        if n_landmarks is not None:
            self._nystroem(X, n_top, rng, min(n_landmarks, N), root, mass)
        else:
            self.landmarks = X
            K = self._kernel(X, X)
            if mass is not None:  # H K H^T: K_ij - m_i - m_j + c (module docstring)
                mean = K @ mass / mass.sum()  # m_i = <phi(x_i), mu>
                square = mass @ mean / mass.sum()  # c = <mu, mu>
                K = K - mean[:, None]  # a new array: a precomputed K is the caller's
                K -= mean[None, :]
                K += square
            weighted = K if root is None else root[:, None] * K * root[None, :]
            self.gamma, self.A = top_eigenpairs(
                weighted, N if n_top is None else n_top, eigen_solver, rng
            )
            # z(x) = k(x, X) S^1/2 A Gamma^-1/2 (S = I without weights)
            self.to_scores = self.A / np.sqrt(self.gamma)
            if root is not None:
                self.to_scores = root[:, None] * self.to_scores
            if mass is not None:  # T = H^T S^1/2 A Gamma^-1/2, offset m^T T
                self.to_scores -= mass[:, None] * (self.to_scores.sum(axis=0) / mass.sum())
                self.offset = mean @ self.to_scores
            if root is not None:  # K is H K H^T when centred: z(x_i) = (K_i - m^T) T
                self.training_scores = K @ self.to_scores

    def _nystroem(self, X, n_top, rng, m, root=None, mass=None):
        """The basis of m landmarks drawn without replacement by rng; ``root``: sqrt(weights);
        ``mass``: the weights of the mean the features are centred by, or None."""
        self.landmarks = X[np.sort(rng.choice(X.shape[0], m, replace=False))]
        s, V = gram_eigh(self._kernel(self.landmarks, self.landmarks))
        keep = s > EIGEN_CUTOFF * max(s.max(), 0.0)
        self.to_features = V[:, keep] / np.sqrt(s[keep])  # phi~(x) = k(x, L) U S^-1/2
        features = self._kernel(X, self.landmarks) @ self.to_features  # Phi (N, m')
        if mass is not None:  # phi~(x_i) - mu~, mu~ their weighted mean over the N points
            mu = mass @ features / mass.sum()
            features = features - mu
        unweighted = features
        if root is not None:  # the SVD of S^1/2 Phi: the weighted covariance's directions
            features = root[:, None] * features
        # The thin SVD Phi = A Sigma W^T from the eigenpairs of the m' x m' matrix
        # Phi^T Phi = W Sigma^2 W^T: N m'^2 / 2 flops for the product against the SVD's
        # ~4 N m'^2 (a third of the fit on 4000 MNIST images with 1000 landmarks).  The
        # columns of A = Phi W Sigma^-1 lose orthogonality like eps * sigma_1^2 / sigma_k^2,
        # at most ~1e-6 at the cutoff sigma_k^2 > 1e-10 sigma_1^2 shared with the exact path.
        gamma, W = top_eigenpairs(features.T @ features, features.shape[1], "dense", rng)
        if n_top is not None:
            gamma, W = gamma[:n_top], W[:, :n_top]
        # A zero landmark Gram matrix leaves no feature (gamma empty): an empty basis, as
        # the exact path gives for a zero Gram matrix (every class ties at d = 0).
        self.gamma = gamma
        self.A = (features @ W) / np.sqrt(gamma)
        self.to_scores = self.to_features @ W  # z(x) = phi~(x) W (- mu~ W centred)
        if mass is not None:
            self.offset = mu @ W
        if root is not None:
            self.training_scores = unweighted @ W

    def _kernel(self, X, Y):
        """k(X, Y); with a precomputed kernel X already holds the rows k(X, training points)."""
        kernel, gamma, degree, coef0 = self.params
        if kernel == "precomputed":
            return X
        return kernel_matrix(X, Y, kernel, gamma, degree, coef0)

    def scores(self, X):
        """z(x) for every row of X, shape (n, D); centred: k(x, X) T - offset (k(x, X) a block
        of rows at a time, ``kernel_times``)."""
        kernel, gamma, degree, coef0 = self.params
        if kernel == "precomputed":  # X holds the rows k(x, training points)
            Z = np.asarray(X @ self.to_scores)
        else:
            Z = kernel_times(X, self.landmarks, self.to_scores, kernel, gamma, degree, coef0)
        return Z if self.offset is None else Z - self.offset
