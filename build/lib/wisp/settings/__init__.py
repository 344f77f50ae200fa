"""Settings files: user, project, local and --settings, merged with a stated precedence."""
