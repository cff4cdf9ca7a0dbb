"""``torch.distributed.checkpoint``: its ``state_dict`` module (full and sharded state dicts of
``fully_shard``-ed models); saving is ``torch.save`` of them."""
