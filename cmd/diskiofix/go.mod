module github.com/diskio-go/diskio/cmd/diskiofix

go 1.26.0

require (
	github.com/diskio-go/diskio v0.0.0
	golang.org/x/tools v0.52.0
)

require (
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/diskio-go/diskio => ../..
