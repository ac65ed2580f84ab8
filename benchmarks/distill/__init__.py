"""On-policy distillation against GRPO and SFT on the teacher's outputs, on the tiny model: the study (`run`) and
its README (question, command, table, reading). Run ``python -m benchmarks.distill``."""
