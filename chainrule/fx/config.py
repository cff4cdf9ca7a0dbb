"""``torch.fx.config``: the flags PyTorch's fx passes read (recorded; chainrule's passes show
no progress bars and record no stack traces)."""

disable_progress = True
verbose_progress = False
do_not_emit_stack_traces = False
