//go:build linux

package diskio

import "github.com/diskio-go/diskio/sched"

type platformOptions struct {
	sched *sched.Scheduler
	class sched.Class
}

// WithScheduler sends the file's I/O through s instead of the process-wide
// default scheduler (sched.Default).
func WithScheduler(s *sched.Scheduler) Option { return func(o *options) { o.sched = s } }

// SchedulerOf returns the scheduler Files opened with opts use: the one
// WithScheduler names, else the process-wide default (sched.Default), and
// its error if it could not start. A program that does other I/O beside
// its Files (directory syncs, removals) can send it through the same
// scheduler.
func SchedulerOf(opts ...Option) (*sched.Scheduler, error) {
	o := applyOptions(opts)
	return o.scheduler()
}
