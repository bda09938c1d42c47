//go:build linux

package trace

import (
	"bufio"
	"encoding/json"
	"io"
)

// jsonSyscall and jsonRequest are the JSON-lines forms. Times are
// nanoseconds on the tracer clock.
type jsonSyscall struct {
	Seq       uint64 `json:"seq"`
	Kind      string `json:"kind"`
	Call      string `json:"call"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Submitted int    `json:"submitted"`
	Reaped    int    `json:"reaped"`
	Wait      bool   `json:"wait"`
}

type jsonRequest struct {
	Seq      uint64 `json:"seq"`
	Kind     string `json:"kind"`
	Op       string `json:"op"`
	Fd       int32  `json:"fd"`
	Off      int64  `json:"off"`
	Len      int    `json:"len"`
	N        int    `json:"n"`
	Backend  string `json:"backend"`
	Inline   bool   `json:"inline"`
	Fixed    bool   `json:"fixed"`
	Submits  int    `json:"submits"`
	Errno    int    `json:"errno"`
	Enqueue  int64  `json:"enqueue"`
	Submit   int64  `json:"submit"`
	Complete int64  `json:"complete"`
	Resume   int64  `json:"resume"`
}

// WriteJSONLines writes one JSON object per record, in Seq order:
// {"kind":"syscall",...} and {"kind":"request",...}, times in
// nanoseconds on the tracer clock.
func (s *Snapshot) WriteJSONLines(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	i, j := 0, 0
	for i < len(s.Syscalls) || j < len(s.Requests) {
		var err error
		if j == len(s.Requests) || i < len(s.Syscalls) && s.Syscalls[i].Seq < s.Requests[j].Seq {
			c := s.Syscalls[i]
			i++
			err = enc.Encode(jsonSyscall{c.Seq, "syscall", c.Call.String(), c.Start, c.End, c.Submitted, c.Reaped, c.Wait})
		} else {
			r := s.Requests[j]
			j++
			err = enc.Encode(jsonRequest{r.Seq, "request", r.Op.String(), r.Fd, r.Off, r.Len, r.N, string(r.Backend),
				r.Inline, r.Fixed, r.Submits, int(r.Errno), r.Enqueue, r.Submit, r.Complete, r.Resume})
		}
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}
