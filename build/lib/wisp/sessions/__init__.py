"""Session transcripts on disk: where they live (`paths`), writing them as a run goes
(`transcript`), reading them back into a valid history (`load`, `repair`), and choosing
where a session starts: fresh, resumed, continued or forked (`resume`)."""
