"""torch.testing: assert_close and make_tensor for tests."""

from . import _utils
from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor
