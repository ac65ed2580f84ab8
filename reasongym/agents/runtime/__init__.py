"""What every RL trainer runs on: episodes through environments, rollout batches, the training session.

``episodes`` plays a batch of episodes a turn at a time; ``rollout`` turns them into padded tensors
(`RolloutBatch`); ``session`` owns one run in progress (sampling rounds, the PPO-style update, logging,
checkpoints, evaluation); ``distributed`` holds the torch.distributed helpers.
"""
