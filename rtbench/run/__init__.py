"""A run's life: the runner, its progress events, saving and recovery, owner tracking
and the fleet of runners."""
