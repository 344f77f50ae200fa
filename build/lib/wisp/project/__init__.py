"""Project context kept in files, as Claude Code users keep it: `CLAUDE.md` memory, agents,
skills, output styles and plugins. Read once per session (and again on reload) by
`wisp.project.context.load_project_context`; the engine never reads these files itself."""
