"""The one exception hierarchy of reasongym."""

from __future__ import annotations


class ReasonGymError(Exception):
    """Base class of every error reasongym raises on purpose."""


class ConfigError(ReasonGymError, ValueError):
    """A configuration value is invalid; the message names the field, the value and what is allowed."""


class UnknownEnvError(ReasonGymError, KeyError):
    """An environment id is not registered."""

    def __str__(self) -> str:  # KeyError would otherwise wrap the message in quotes
        return str(self.args[0]) if self.args else ""


class UnknownEnvNameError(UnknownEnvError):
    """No environment of that name exists in any version."""


class UnknownEnvVersionError(UnknownEnvError):
    """The name exists but not in the requested version."""


class DatasetNotFoundError(ReasonGymError, FileNotFoundError):
    """Benchmark data could not be found locally or loaded from the hub."""


class ServerError(ReasonGymError, RuntimeError):
    """A model server refused a request, or kept failing after the retries; the message names the status."""


class CheckpointError(ReasonGymError, ValueError):
    """A checkpoint is damaged: a file missing, truncated or unreadable; the message names the file."""


class CollectiveTimeout(ReasonGymError, RuntimeError):
    """A process waited past the collective timeout for the others; the message names the stalled ranks."""


class TrainingFailed(ReasonGymError, RuntimeError):
    """A run ended without training: every step it took was skipped, or a process it needs died."""


class ResourceBusyError(ReasonGymError, RuntimeError):
    """A run folder or evaluation file is being written by another process (it holds the lock)."""


class VerifierOutOfMemory(ReasonGymError, MemoryError):
    """A verifier computation in the worker process ran past the worker's memory limit."""


class VerifierTimeout(BaseException):
    """A verifier computation ran past its time limit.

    A ``BaseException`` so that a broad ``except Exception`` in user code cannot swallow it.
    """


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped on Ctrl-C or SIGTERM after saving what it could; the message says what and where."""

    def __init__(self, message: str, *, run_dir: object = None, step: int = 0) -> None:
        """Keep the message, the run folder and the last step saved."""
        super().__init__(message)
        self.run_dir = run_dir
        self.step = step

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
