"""What targets share with the runner: who owns a run, the tracefs state a dead run left."""
