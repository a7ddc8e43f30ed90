"""Reading and writing models: `load` reads a model and checks it is sound, with its
weights on disk (`external`) read where needed; `stream` leaves large complex weights
there through the rewrite; `save` stages the output beside its target; `transaction`
renames every staged file into place only when the whole run passed."""
