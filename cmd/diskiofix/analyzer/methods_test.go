package analyzer

import (
	"os"
	"reflect"
	"testing"

	"github.com/diskio-go/diskio"
)

// The analyzer takes a *diskio.File for an *os.File wherever the methods
// used, and those of every interface the file goes to, are diskio's by
// name. That holds because each method of *os.File that *diskio.File has
// has the same signature, with *diskio.File for *os.File.
func TestMethodsMatchOSFile(t *testing.T) {
	osT, dT := reflect.TypeFor[*os.File](), reflect.TypeFor[*diskio.File]()
	same := func(a, b reflect.Type) bool { return a == b || (a == osT && b == dT) }
	missing := 0
	for i := range osT.NumMethod() {
		om := osT.Method(i)
		dm, ok := dT.MethodByName(om.Name)
		if !ok {
			missing++
			if diskioMethods[om.Name] {
				t.Errorf("diskioMethods has %s, which *diskio.File lacks", om.Name)
			}
			continue
		}
		ot, dt := om.Type, dm.Type
		ok = ot.NumIn() == dt.NumIn() && ot.NumOut() == dt.NumOut() && ot.IsVariadic() == dt.IsVariadic()
		for j := 0; ok && j < ot.NumIn(); j++ {
			ok = same(ot.In(j), dt.In(j))
		}
		for j := 0; ok && j < ot.NumOut(); j++ {
			ok = same(ot.Out(j), dt.Out(j))
		}
		if !ok {
			t.Errorf("(*os.File).%s is %v, (*diskio.File).%s is %v", om.Name, ot, om.Name, dt)
		}
	}
	t.Logf("%d methods of *os.File, %d of them missing from *diskio.File", osT.NumMethod(), missing)
}
