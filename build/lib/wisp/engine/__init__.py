"""The agent loop: Session (run state), the turn loop, and the pure stop/continue rules."""
