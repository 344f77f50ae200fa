from wisp.cli.main import main

raise SystemExit(main())
