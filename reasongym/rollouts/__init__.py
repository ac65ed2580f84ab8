"""Where samples are drawn: episodes played through environments, for training and for evaluation alike.

`episodes` plays a batch of episodes a turn at a time through the plain Gymnasium loop (``reset``, then
``step(text)`` until the episode ends), one env copy per episode, the G samples of a problem drawn with
``n = G`` from one prompt; `env_pool` holds those copies and steps them in parallel; `batch` pads finished
episodes into a `RolloutBatch` of tensors, the layout the trainers' losses consume. Evaluation
(`reasongym.evaluation.runner`) and the trainers (`reasongym.agents`) both sample through here; the sampling
settings travel in one `reasongym.generation.SamplingParams`, whose ``n`` is the group size.
"""
