module github.com/diskio-go/diskio/contrib/sqlitevfs

go 1.26.0

require (
	github.com/diskio-go/diskio v0.0.0
	github.com/ncruces/go-sqlite3 v0.37.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe // indirect
	github.com/ncruces/go-sqlite3-wasm/v6 v6.5.35401 // indirect
	github.com/ncruces/julianday v1.0.0 // indirect
)

replace github.com/diskio-go/diskio => ../..
