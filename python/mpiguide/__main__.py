from mpiguide.cli import main

raise SystemExit(main())
