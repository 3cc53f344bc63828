package paramcrypt

import "math/bits"

// This file re-implements, for key derivation only, the Apache Harmony
// SHA1PRNG that Android ships as InsecureSHA1PRNGKeyDerivator. SoloPi derives
// its AES key with deriveInsecureKey(seed, 32): a fresh SHA1PRNG is seeded
// with the seed bytes and 32 bytes are drawn. The generator is NOT standard
// SHA-1 output: the counter is placed after a word index computed with a Java
// operator-precedence quirk, and the hash state is chained across blocks.
// Every quirk is reproduced on purpose, because the keys must be bit-identical
// to the ones on real devices (verified by the key vectors in the tests).

const (
	prngFrameLength     = 16 // 32-bit words per SHA-1 block
	prngBytesOffset     = 81 // word holding the byte count of the current block
	prngHashOffset      = 82 // words holding H0..H4
	prngExtraFrameOff   = 5  // offset of the spill block in copies
	prngFrameOffset     = 21 // offset of the saved block in copies
	prngHashBytesToUse  = 20
	prngMaxBytes        = 48
	prngDigestLength    = 20
	prngStateUndefined  = 0
	prngStateSetSeed    = 1
	prngStateNextBytes  = 2
	prngSeedArrayLength = prngHashOffset + prngExtraFrameOff
	prngCopiesLength    = 2*prngFrameLength + prngExtraFrameOff
)

var (
	prngEndFlags = [4]uint32{0x80000000, 0x800000, 0x8000, 0x80}
	prngRight1   = [4]uint{0, 40, 48, 56}
	prngRight2   = [4]uint{0, 8, 16, 24}
	prngLeft     = [4]uint{0, 24, 16, 8}
	prngMask     = [4]uint32{0xFFFFFFFF, 0x00FFFFFF, 0x0000FFFF, 0x000000FF}
)

// sha1prng holds the generator state. The word array doubles as the SHA-1
// message block (0..15), the message schedule (16..79), the byte counter (81)
// and the chaining value (82..86), exactly like Harmony's layout, because the
// algorithm relies on that aliasing (words 16 and 17 carry the spill block).
type sha1prng struct {
	seed       [prngSeedArrayLength]uint32
	seedLength int64
	copies     [prngCopiesLength]uint32
	nextBytes  [prngDigestLength]byte
	nextBIndex int
	counter    int64
	state      int
}

func newSHA1PRNG() *sha1prng {
	p := &sha1prng{nextBIndex: prngHashBytesToUse, state: prngStateUndefined}
	p.seed[prngHashOffset] = 0x67452301
	p.seed[prngHashOffset+1] = 0xEFCDAB89
	p.seed[prngHashOffset+2] = 0x98BADCFE
	p.seed[prngHashOffset+3] = 0x10325476
	p.seed[prngHashOffset+4] = 0xC3D2E1F0
	return p
}

// setSeed mirrors engineSetSeed: the seed bytes are streamed into the SHA-1
// block without finalising the hash.
func (p *sha1prng) setSeed(b []byte) {
	if p.state == prngStateNextBytes {
		copy(p.seed[prngHashOffset:prngHashOffset+prngExtraFrameOff], p.copies[:prngExtraFrameOff])
	}
	p.state = prngStateSetSeed
	if len(b) != 0 {
		p.updateHash(b)
		p.seedLength += int64(len(b))
	}
}

// updateHash streams bytes big-endian into words 0..15, compressing each
// full block; word 81 keeps the byte position modulo 64.
func (p *sha1prng) updateHash(b []byte) {
	index := int(p.seed[prngBytesOffset])
	p.seed[prngBytesOffset] = uint32((index + len(b)) & 0x3F)
	wordIndex := index >> 2
	byteIndex := index & 3
	for _, c := range b {
		shift := uint(3-byteIndex) << 3
		if byteIndex == 0 {
			p.seed[wordIndex] = uint32(c) << shift
		} else {
			p.seed[wordIndex] |= uint32(c) << shift
		}
		byteIndex++
		if byteIndex == 4 {
			byteIndex = 0
			wordIndex++
			if wordIndex == prngFrameLength {
				p.computeHash()
				wordIndex = 0
			}
		}
	}
}

// computeHash is one SHA-1 compression of words 0..15 into the chaining
// value, using words 16..79 as the schedule (clobbering them, as Harmony does).
func (p *sha1prng) computeHash() {
	w := p.seed[:80]
	for t := 16; t < 80; t++ {
		w[t] = bits.RotateLeft32(w[t-3]^w[t-8]^w[t-14]^w[t-16], 1)
	}
	h := p.seed[prngHashOffset : prngHashOffset+5]
	a, b, c, d, e := h[0], h[1], h[2], h[3], h[4]
	for t := 0; t < 80; t++ {
		var f, k uint32
		switch {
		case t < 20:
			f, k = (b&c)|(^b&d), 0x5A827999
		case t < 40:
			f, k = b^c^d, 0x6ED9EBA1
		case t < 60:
			f, k = (b&c)|(b&d)|(c&d), 0x8F1BBCDC
		default:
			f, k = b^c^d, 0xCA62C1D6
		}
		tmp := bits.RotateLeft32(a, 5) + f + e + k + w[t]
		e, d, c, b, a = d, c, bits.RotateLeft32(b, 30), a, tmp
	}
	h[0] += a
	h[1] += b
	h[2] += c
	h[3] += d
	h[4] += e
}

// read mirrors engineNextBytes for a seeded generator. An unseeded generator
// would mix in OS randomness; key derivation always seeds first, so that
// branch is deliberately not supported.
func (p *sha1prng) read(out []byte) {
	const extraBytes = 7
	lastWord := 0
	if p.seed[prngBytesOffset] != 0 {
		// Harmony writes `(x + 7) >> 3 - 1`, which Java parses as
		// `(x + 7) >> (3 - 1)`. Keeping that quirk is what makes the keys match.
		lastWord = (int(p.seed[prngBytesOffset]) + extraBytes) >> (3 - 1)
	}
	if p.state == prngStateSetSeed {
		copy(p.copies[:prngExtraFrameOff], p.seed[prngHashOffset:prngHashOffset+prngExtraFrameOff])
		for i := lastWord + 3; i < prngFrameLength+2; i++ {
			p.seed[i] = 0
		}
		bitCount := uint64(p.seedLength<<3) + 64
		if p.seed[prngBytesOffset] < prngMaxBytes {
			p.seed[14] = uint32(bitCount >> 32)
			p.seed[15] = uint32(bitCount)
		} else {
			p.copies[prngExtraFrameOff+14] = uint32(bitCount >> 32)
			p.copies[prngExtraFrameOff+15] = uint32(bitCount)
		}
		p.nextBIndex = prngHashBytesToUse
	}
	p.state = prngStateNextBytes
	if len(out) == 0 {
		return
	}
	pos := 0
	if n := min(prngHashBytesToUse-p.nextBIndex, len(out)); n > 0 {
		copy(out, p.nextBytes[p.nextBIndex:p.nextBIndex+n])
		p.nextBIndex += n
		pos += n
	}
	if pos >= len(out) {
		return
	}
	n := int(p.seed[prngBytesOffset] & 3)
	for {
		ctr := uint64(p.counter)
		if n == 0 {
			p.seed[lastWord] = uint32(ctr >> 32)
			p.seed[lastWord+1] = uint32(ctr)
			p.seed[lastWord+2] = prngEndFlags[0]
		} else {
			p.seed[lastWord] |= uint32(ctr>>prngRight1[n]) & prngMask[n]
			p.seed[lastWord+1] = uint32(ctr >> prngRight2[n])
			p.seed[lastWord+2] = uint32(ctr<<prngLeft[n]) | prngEndFlags[n]
		}
		if p.seed[prngBytesOffset] > prngMaxBytes {
			p.copies[prngExtraFrameOff] = p.seed[prngFrameLength]
			p.copies[prngExtraFrameOff+1] = p.seed[prngFrameLength+1]
		}
		p.computeHash()
		if p.seed[prngBytesOffset] > prngMaxBytes {
			copy(p.copies[prngFrameOffset:prngFrameOffset+prngFrameLength], p.seed[:prngFrameLength])
			copy(p.seed[:prngFrameLength], p.copies[prngExtraFrameOff:prngExtraFrameOff+prngFrameLength])
			p.computeHash()
			copy(p.seed[:prngFrameLength], p.copies[prngFrameOffset:prngFrameOffset+prngFrameLength])
		}
		p.counter++
		for i := 0; i < prngExtraFrameOff; i++ {
			k := p.seed[prngHashOffset+i]
			p.nextBytes[4*i] = byte(k >> 24)
			p.nextBytes[4*i+1] = byte(k >> 16)
			p.nextBytes[4*i+2] = byte(k >> 8)
			p.nextBytes[4*i+3] = byte(k)
		}
		p.nextBIndex = 0
		j := min(prngHashBytesToUse, len(out)-pos)
		if j > 0 {
			copy(out[pos:pos+j], p.nextBytes[:j])
			pos += j
			p.nextBIndex += j
		}
		if pos >= len(out) {
			return
		}
	}
}

// deriveInsecureKey is Android's InsecureSHA1PRNGKeyDerivator.deriveInsecureKey.
func deriveInsecureKey(seed []byte, keySize int) []byte {
	p := newSHA1PRNG()
	p.setSeed(seed)
	key := make([]byte, keySize)
	p.read(key)
	return key
}
