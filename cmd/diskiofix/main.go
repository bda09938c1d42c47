// Command diskiofix moves a Go package's files from *os.File to diskio:
// it rewrites the opens of package os (os.Open, os.OpenFile, os.Create,
// os.CreateTemp, ioutil.TempFile, os.OpenInRoot, os.OpenFile as a value)
// and the *os.File types their files flow into, where every use of the
// file is one a *diskio.File serves too, and reports the opens it leaves
// with the reason. See README.md.
//
//	go run github.com/diskio-go/diskio/cmd/diskiofix@latest -fix ./...
//	go vet -vettool=$(command -v diskiofix) ./...
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/diskio-go/diskio/cmd/diskiofix/analyzer"
)

func main() { singlechecker.Main(analyzer.Analyzer) }
