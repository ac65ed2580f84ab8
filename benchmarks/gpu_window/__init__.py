"""The GPU window: the kit that carries the offline install, the window runner and its records."""
