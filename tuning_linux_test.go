package diskio

// withTuning turns off the paths the benchmarks compare against, for the
// File being opened only.
func withTuning(t tuning) Option { return func(o *options) { o.tuning = t } }
