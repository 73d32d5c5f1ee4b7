package replica

import (
	"sync"
	"unsafe"

	"vitrine/schema"
)

// Decoding a change's entity is most of what applying it costs, and it depends on nothing but the
// change: Prepare does it ahead, on whatever goroutines the follower gives it, and the builder
// then takes the decoded entity instead of decoding on the follower's goroutine. A change that was
// never prepared (or whose data changed since) is decoded at apply, with the same result: the
// same decoder runs in both places.

// prepared is an entity Prepare decoded, with the data it came from.
type prepared struct {
	data *byte // c.Data's first byte and length when decoded
	n    int
	v    any // a *T of the change's kind
	err  error
}

// preparedSlab hands out prepared records from blocks of preparedBlock. A prepared record lives
// only from Prepare to the change's apply, while the entity it carries stays: allocated one by
// one, the records were interleaved with the entities' own small allocations and left, once
// freed, a heap of half-empty spans after every snapshot load. A block is one allocation, freed
// whole once its changes are applied.
type preparedSlab struct {
	mu  sync.Mutex
	cur []prepared
}

const preparedBlock = 1024

func (s *preparedSlab) next() *prepared {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cur) == 0 {
		s.cur = make([]prepared, preparedBlock)
	}
	p := &s.cur[0]
	s.cur = s.cur[1:]
	return p
}

// Prepare decodes a change's entity ahead of Change (feed.Preparer). It is safe for concurrent
// use with everything but Change of the same change: the follower may call it on several
// goroutines, in any order, before passing the change to Change in stream order. It stores the
// entity on the change (schema.Change.Decoded); heads, tombstones and kinds the replica does not
// decode are left alone. One change is prepared for one replica.
func (r *Replica) Prepare(c *schema.Change) {
	if c.Deleted || len(c.Data) == 0 {
		return
	}
	var v any
	var err error
	switch c.Kind {
	case schema.KindProduct:
		v, err = decodeNew[schema.Product](c.Data, r.intern)
	case schema.KindVariant:
		v, err = decodeNew[schema.Variant](c.Data, r.intern)
	case schema.KindCategory:
		v, err = decodeNew[schema.Category](c.Data, r.intern)
	case schema.KindCurrency:
		v, err = decodeNew[schema.Currency](c.Data, r.intern)
	case schema.KindPost:
		v, err = decodeNew[schema.Post](c.Data, r.intern)
	case schema.KindFlashSale:
		v, err = decodeNew[schema.FlashSale](c.Data, r.intern)
	case schema.KindSection:
		v, err = decodeNew[schema.Section](c.Data, r.intern)
	case schema.KindReview:
		v, err = decodeNew[schema.Review](c.Data, r.intern)
	case schema.KindStats:
		v, err = decodeNew[schema.ProductStats](c.Data, r.intern)
	case schema.KindTerm:
		v, err = decodeNew[schema.Term](c.Data, r.intern)
	case schema.KindAuthor:
		v, err = decodeNew[schema.Author](c.Data, r.intern)
	case schema.KindPostMarker:
		v, err = decodeNew[schema.PostMarker](c.Data, r.intern)
	default:
		return
	}
	p := r.prepared.next()
	*p = prepared{data: unsafe.SliceData(c.Data), n: len(c.Data), v: v, err: err}
	c.Decoded = p
}

func decodeNew[T any](data []byte, in *schema.Interner) (*T, error) {
	v := new(T)
	if err := schema.DecodeEntityInterned(data, v, in); err != nil {
		return nil, err
	}
	return v, nil
}
