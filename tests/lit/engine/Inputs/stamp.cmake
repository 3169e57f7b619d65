# verdict-program.test: a build that writes a stamp beside the program at
# every link (the time of the build, in ns), as builds that record a build
# id or time do.
add_custom_command(TARGET app POST_BUILD COMMAND sh -c "date +%s%N > stamp.txt" VERBATIM)
