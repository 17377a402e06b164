package metrics

import "time"

// ObserveCall counts and times one round trip of the shared mode's Redis
// client (backend.CallObserver).
func (m *Metrics) ObserveCall(command string, elapsed time.Duration, errKind string) {
	m.redisCalls.WithLabelValues(command).Inc()
	m.redisDuration.WithLabelValues(command).Observe(elapsed.Seconds())
	if errKind != "" {
		m.redisErrors.WithLabelValues(errKind).Inc()
	}
}
