package partnerapi

import "sync"

// maxKeptPageBuffer bounds the buffers pageBuffers keeps: a page of the
// default 50 referrals is about 18 KB; a rare page of 1,000 large records
// is left to the garbage collector rather than held for good.
const maxKeptPageBuffer = 256 << 10

// pageBuffers recycles the buffers a listing's body is built in. A page
// is written with one Write, which net/http has copied or sent by the
// time it returns, so the buffer is free again as the handler ends; a
// new 18 KB buffer per page was most of a listing's garbage.
type pageBuffers struct{ pool sync.Pool }

// pageBuffer returns an empty buffer for a listing's body.
func (a *API) pageBuffer() *[]byte {
	if b, ok := a.pages.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 32<<10)
	return &b
}

// releasePageBuffer returns b for another listing, unless it grew past
// maxKeptPageBuffer.
func (a *API) releasePageBuffer(b *[]byte) {
	if cap(*b) > maxKeptPageBuffer {
		return
	}
	*b = (*b)[:0]
	a.pages.pool.Put(b)
}
