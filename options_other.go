//go:build !linux

package diskio

type platformOptions struct{}
