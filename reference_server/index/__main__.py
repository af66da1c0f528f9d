from reference_server.index.cli import main

raise SystemExit(main())
