from launchprof.entry import main

main()
