-- Prints what a script sees of its command line.
print("arg[0]", arg[0])
print("arg[-1]", arg[-1])
print("#arg", #arg)
for i = 1, #arg do print("arg", i, arg[i]) end
print("varargs", select("#", ...), ...)
io.stderr:write("to stderr\n")
