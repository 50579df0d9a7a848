"""msvm.verify: cross-checks between the layers and checks of the papers' claims (issue 5)."""
