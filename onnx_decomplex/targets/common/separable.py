"""An affine chain whose map is separable over two blocks of x's axes, run as products
along each: a 2-D transform as a transform along one axis, then the other.

FNet mixes tokens by Re(FFT2(x)) over the sequence and the hidden axes: with x as a
matrix X [S, H], that is Cs X Ch - Ss X Sh (C and S the cosine and sine parts of each
axis's DFT matrix); a residual added, and LayerNorm's mean taken off after, add two
more such terms. M ([S' H', S H]) is then a short sum of Kronecker products,

    M = sum_k A_k (x) B_k,      y = sum_k A_k X B_k^T,

and the number of terms k is the rank of M rearranged as [(S' S), (H' H)] (Van Loan and
Pitsianis), which its singular values give. y is then two products on x's own layout,
X [B_1^T | ... | B_r^T] and [A_1 | ... | A_r] times its r blocks stacked (one
Transpose between), at r S H (H' + S') multiply-adds per row where the dense M costs
S H S' H': 0.28 of it for FNet's mixing (16 x 32, three terms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .chains import Placed
from .probe import rank_above, rank_of

TOLERANCE = 1e-5
"""How far the sum may be from M, as a share of M's largest entry: M is read in float32
arithmetic."""


@dataclass
class Separable:
    """y = sum_k A_k X B_k^T, x's tail as X [I1, I2] and y's as [O1, O2].

    Attributes:
        blocks: I1, I2, O1, O2.
        left: [A_1 | ... | A_r], [O1, r I1].
        right: [B_1^T | ... | B_r^T], [I2, r O2].
        cost: Multiply-adds per row of x.
    """

    blocks: tuple[int, int, int, int]
    left: np.ndarray
    right: np.ndarray
    cost: float

    @property
    def terms(self) -> int:
        return self.right.shape[1] // self.blocks[3]

    @property
    def nodes(self) -> int:
        """The nodes `replace_separable` puts in, besides x's and y's reshapes and b."""
        return 2 + 3 * (self.terms > 1)


def read_separable(m: np.ndarray, tail: list[int], tail_y: list[int]) -> Separable | None:
    """The cheapest `Separable` that is M ([N', N], x's `tail` axes flattened to N and
    y's `tail_y` to N'), over every split of the tail into two blocks of axes; None
    where none costs less than M itself."""
    if len(tail) != len(tail_y):
        return None
    found = []
    for split in range(1, len(tail)):
        i1, i2 = math.prod(tail[:split]), math.prod(tail[split:])
        o1, o2 = math.prod(tail_y[:split]), math.prod(tail_y[split:])
        form = _separable(m, (i1, i2, o1, o2))
        if form is not None and form.cost < m.size:
            found.append(form)
    return min(found, key=lambda form: form.cost, default=None)


def _separable(m: np.ndarray, blocks: tuple[int, int, int, int]) -> Separable | None:
    i1, i2, o1, o2 = blocks
    arranged = m.reshape(o1, o2, i1, i2).transpose(0, 2, 1, 3).reshape(o1 * i1, o2 * i2)
    most = m.size // (i1 * i2 * o2 + o1 * i1 * o2)  # the most terms cheaper than M
    if most < min(arranged.shape) and rank_above(arranged, most):
        return None  # not read off the SVD, which takes (o1 i1)(o2 i2)^2
    u, s, vt = np.linalg.svd(arranged, full_matrices=False)
    r = rank_of(s)
    if r == 0 or r * (i1 * i2 * o2 + o1 * i1 * o2) >= m.size:
        return None
    root = np.sqrt(s[:r])
    a = (u[:, :r] * root).T.reshape(r, o1, i1)  # A_k
    b = (vt[:r] * root[:, None]).reshape(r, o2, i2)  # B_k
    again = np.einsum("kai,kbj->abij", a, b).reshape(m.shape)
    if np.max(np.abs(again - m)) > TOLERANCE * np.max(np.abs(m)):
        return None
    left = a.transpose(1, 0, 2).reshape(o1, r * i1)
    right = b.transpose(2, 0, 1).reshape(i2, r * o2)
    moves = 2 * r * i1 * o2 if r > 1 else 0  # the Transpose between
    return Separable(blocks, left, right, float(r * (i1 * i2 * o2 + o1 * i1 * o2) + moves))


def replace_separable(
    model, chain, form: Separable, b: np.ndarray, dtype, lead: int, tails: tuple[list, list]
) -> None:
    """Computes chain.y as `form` of chain.x (plus b), in the place of the chain's last
    node. x and y have `lead` leading axes, then the `tails` the map acts on, x's and
    y's, each reshaped to its two blocks where it has more axes."""
    put = Placed(model.graph, chain.y, lead)
    i1, i2, o1, o2 = form.blocks
    r = form.terms

    def const(stem: str, value: np.ndarray) -> str:
        return put.constant(stem, np.ascontiguousarray(value).astype(dtype))

    x = chain.x if list(tails[0]) == [i1, i2] else put.reshape(chain.x, [i1, i2])
    z = put.node("MatMul", [x, const("right", form.right)])  # [I1, r O2]
    if r > 1:  # the r blocks [I1, O2] stacked: [r I1, O2]
        z = put.reshape(z, [i1, r, o2])
        perm = [*range(lead), lead + 1, lead, lead + 2]
        z = put.reshape(put.node("Transpose", [z], perm=perm), [r * i1, o2])
    y = put.node("MatMul", [const("left", form.left), z])  # [O1, O2]
    if np.any(b != 0):
        y = put.node("Add", [y, const("bias", b.reshape(*b.shape[:-1], o1, o2))])
    if list(tails[1]) != [o1, o2]:
        put.reshape(y, tails[1])
    put.done()
