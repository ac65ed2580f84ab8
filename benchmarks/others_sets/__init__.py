"""Other projects' labelled verifier sets: where each comes from, how it is read, and the grading run."""
