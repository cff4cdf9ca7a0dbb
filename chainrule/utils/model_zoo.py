"""``torch.utils.model_zoo``: the old name of ``torch.hub.load_state_dict_from_url``."""

from ..hub import load_state_dict_from_url as load_url  # noqa: F401
from ..hub import tqdm  # noqa: F401  (torchvision imports it from here)
