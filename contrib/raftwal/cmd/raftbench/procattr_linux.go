package main

import "syscall"

// procAttr makes a node die with the process that started it.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
