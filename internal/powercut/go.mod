module github.com/diskio-go/diskio/internal/powercut

go 1.26.0

require (
	github.com/diskio-go/diskio v0.0.0-00010101000000-000000000000
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
)

require (
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/diskio-go/diskio => ../..
