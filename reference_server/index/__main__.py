from reference_server.index.build import main

raise SystemExit(main())
