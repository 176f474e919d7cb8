"""The drivers openreg ships: the one list the package and the tests read."""

SHIPPED_DRIVERS = ["cpu_sim", "threaded_sim"]

def driver_label(name):
    return "//plugins/%s:libopenreg_%s.so" % (name, name)
