package diskio_test

import (
	"encoding"
	"encoding/json"
	"flag"
	"testing"

	"github.com/diskio-go/diskio"
)

var (
	_ encoding.TextMarshaler   = diskio.PageCache
	_ encoding.TextUnmarshaler = new(diskio.DirectMode)
)

func TestDirectModeText(t *testing.T) {
	for _, c := range []struct {
		m    diskio.DirectMode
		name string
	}{{diskio.PageCache, "pagecache"}, {diskio.Direct, "direct"}, {diskio.DirectRequired, "direct-required"}} {
		if got := c.m.String(); got != c.name {
			t.Errorf("%d.String() = %q, want %q", int(c.m), got, c.name)
		}
		b, err := c.m.MarshalText()
		if err != nil || string(b) != c.name {
			t.Errorf("%v.MarshalText() = %q, %v", c.m, b, err)
		}
		var back diskio.DirectMode = -1
		if err := back.UnmarshalText(b); err != nil || back != c.m {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, c.m)
		}
	}
	for text, want := range map[string]diskio.DirectMode{
		"page-cache": diskio.PageCache, "buffered": diskio.PageCache, "PageCache": diskio.PageCache,
		"Direct": diskio.Direct, "DIRECT-REQUIRED": diskio.DirectRequired,
	} {
		var m diskio.DirectMode = -1
		if err := m.UnmarshalText([]byte(text)); err != nil || m != want {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, m, err, want)
		}
	}
	for _, text := range []string{"", "o_direct", "directrequired", " direct"} {
		m := diskio.Direct
		if err := m.UnmarshalText([]byte(text)); err == nil || m != diskio.Direct {
			t.Errorf("UnmarshalText(%q) = %v, %v; want an error and the mode unchanged", text, m, err)
		}
	}
	bad := diskio.DirectMode(7)
	if bad.String() != "DirectMode(7)" {
		t.Errorf("String of 7 = %q", bad.String())
	}
	if _, err := bad.MarshalText(); err == nil {
		t.Error("MarshalText of 7 succeeded")
	}
}

// A DirectMode is a flag's value and a JSON string as it is.
func TestDirectModeFlagJSON(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var m diskio.DirectMode
	fs.TextVar(&m, "mode", diskio.PageCache, "")
	if err := fs.Parse([]string{"-mode", "direct-required"}); err != nil || m != diskio.DirectRequired {
		t.Fatalf("flag: %v, %v", m, err)
	}
	var cfg struct{ Mode diskio.DirectMode }
	if err := json.Unmarshal([]byte(`{"Mode":"direct"}`), &cfg); err != nil || cfg.Mode != diskio.Direct {
		t.Fatalf("json: %v, %v", cfg.Mode, err)
	}
	b, err := json.Marshal(cfg)
	if err != nil || string(b) != `{"Mode":"direct"}` {
		t.Fatalf("json: %s, %v", b, err)
	}
}
