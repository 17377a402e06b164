package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseDelay(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"250ms", 250 * time.Millisecond, ""},
		{"1.5s", 1500 * time.Millisecond, ""},
		{"250", 250 * time.Millisecond, ""},
		{" 40 ", 40 * time.Millisecond, ""},
		{"0", 0, ""},
		{"60s", 60 * time.Second, ""},
		{"60000", 60 * time.Second, ""},
		{"", 0, "empty"},
		{"-5", 0, "negative"},
		{"-1s", 0, "negative"},
		{"-9223372036854775807", 0, "negative"},
		{"61s", 0, "maximum"},
		{"60001", 0, "maximum"},
		{"99999999999999999", 0, "maximum"},
		{"soon", 0, "is not a delay"},
		{"10 ms", 0, "is not a delay"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDelay(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDelay(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				// The format is shown once, not repeated by each layer.
				if n := strings.Count(err.Error(), "250ms"); n != 1 {
					t.Errorf("ParseDelay(%q) error %q shows the example %d times", tt.in, err, n)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDelay(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDelaySample(t *testing.T) {
	const n = 2000
	tests := []struct {
		name     string
		delay    Delay
		min, max time.Duration
		// reachMin/reachMax: some sample must lie within 10% of the range
		// ends, which shows the spread (or the cap) is really used.
		reachMin, reachMax bool
	}{
		{"fixed", Delay{Fixed: Duration(250 * time.Millisecond)}, 250 * time.Millisecond, 250 * time.Millisecond, true, true},
		{"uniform", Delay{Min: Duration(100 * time.Millisecond), Max: Duration(200 * time.Millisecond)}, 100 * time.Millisecond, 200 * time.Millisecond, true, true},
		{"uniform from zero", Delay{Max: Duration(50 * time.Millisecond)}, 0, 50 * time.Millisecond, true, true},
		{"lognormal capped", Delay{Median: Duration(time.Second), Sigma: 2, Max: Duration(2 * time.Second)}, 0, 2 * time.Second, false, true},
		{"lognormal default cap", Delay{Median: Duration(20 * time.Second), Sigma: 3}, 0, DefaultLognormalCap, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.delay.validate(); err != nil {
				t.Fatalf("test delay invalid: %v", err)
			}
			rng := newRNG(1)
			tenth := (tt.max - tt.min) / 10
			var lo, hi bool
			for range n {
				d := tt.delay.sample(rng)
				if d < tt.min || d > tt.max {
					t.Fatalf("sample %v outside [%v, %v]", d, tt.min, tt.max)
				}
				lo = lo || d <= tt.min+tenth
				hi = hi || d >= tt.max-tenth
			}
			if tt.reachMin && !lo || tt.reachMax && !hi {
				t.Errorf("samples did not reach the range ends: near min %v, near max %v", lo, hi)
			}
		})
	}
}

func TestLognormalMedian(t *testing.T) {
	// Half the samples of an uncapped lognormal lie below its median.
	d := Delay{Median: Duration(100 * time.Millisecond), Sigma: 0.5}
	rng := newRNG(3)
	below := 0
	const n = 4000
	for range n {
		if d.sample(rng) < 100*time.Millisecond {
			below++
		}
	}
	if below < n*45/100 || below > n*55/100 {
		t.Errorf("%d of %d samples below the median, want about half", below, n)
	}
}

func TestDelayJSON(t *testing.T) {
	var d Delay
	if err := json.Unmarshal([]byte(`{"median":"300ms","sigma":0.8,"max":"5s"}`), &d); err != nil {
		t.Fatal(err)
	}
	want := Delay{Median: Duration(300 * time.Millisecond), Sigma: 0.8, Max: Duration(5 * time.Second)}
	if d != want {
		t.Fatalf("decoded %+v, want %+v", d, want)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"max":"5s","median":"300ms","sigma":0.8}` {
		t.Errorf("encoded %s", got)
	}
	for _, bad := range []string{`{"fixed":250}`, `{"fixed":"soon"}`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}
