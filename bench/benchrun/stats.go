package main

import "sort"

// median is the middle value (the mean of the two middle ones for an even
// count); 0 for none. A median resists the one round a neighbour's burst of
// CPU spoiled, where a mean would not.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
