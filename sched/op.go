package sched

// Op is the kind of a request.
type Op uint8

var opNames = [...]string{"nop", "read", "write", "fsync", "fdatasync", "fallocate", "unlink", "register-file", "unregister-file"}

func (op Op) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return "op?"
}
