"""Forms that several targets share: the lowering machinery (`lowering`), DFT and STFT
as MatMuls (`transforms`), an Einsum of two operands as one MatMul (`einsum`), and
affine chains found by what they compute (`chains`, `probe`), a rotation by a position
table among them (`rotation`)."""

from . import einsum, transforms  # noqa: F401  (they register their lowerings)
