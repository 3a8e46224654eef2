from infercost.cli import main

raise SystemExit(main())
