package pushtest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// The aes128gcm content coding (RFC 8188) as Web Push uses it (RFC 8291).
const (
	saltBytes      = 16
	headerBytes    = saltBytes + 4 + 1 // salt, rs, idlen
	p256PointBytes = 65                // an uncompressed P-256 point
	tagBytes       = 16
	// minRecordSize is the least rs RFC 8188 allows.
	minRecordSize = 18
	// lastRecordDelimiter ends the data of the last (here the only) record.
	lastRecordDelimiter = 0x02
)

// decrypt opens a push message's body as the user agent holding ua and
// authSecret would: it derives the content key and nonce from the ECDH
// secret with the sender's ephemeral key (the header's keyid), the auth
// secret and the salt (RFC 8291 section 3.4, RFC 8188 section 2.2 and
// 2.3), opens the single record, and strips its padding. It does this
// independently of any library that encrypts, so a test that decrypts
// what herd sent checks herd's encryption rather than a round trip
// through one implementation.
func decrypt(body []byte, ua *ecdh.PrivateKey, authSecret []byte) ([]byte, error) {
	if len(body) < headerBytes {
		return nil, errors.New("the body is shorter than an aes128gcm header")
	}
	salt := body[:saltBytes]
	rs := binary.BigEndian.Uint32(body[saltBytes:])
	idlen := int(body[saltBytes+4])
	if rs < minRecordSize {
		return nil, fmt.Errorf("record size %d is below %d", rs, minRecordSize)
	}
	// RFC 8291 section 4: the keyid is the sender's public key.
	if idlen != p256PointBytes || len(body) < headerBytes+idlen {
		return nil, fmt.Errorf("keyid of %d bytes is not an uncompressed P-256 point", idlen)
	}
	asPublic, err := ecdh.P256().NewPublicKey(body[headerBytes : headerBytes+idlen])
	if err != nil {
		return nil, fmt.Errorf("keyid is not a P-256 point: %w", err)
	}
	record := body[headerBytes+idlen:]
	// A push message is a single record (RFC 8291 section 4).
	if len(record) > int(rs) {
		return nil, fmt.Errorf("%d bytes of records exceed one record of %d", len(record), rs)
	}
	if len(record) <= tagBytes {
		return nil, errors.New("the record is too short to hold a tag and a delimiter")
	}

	secret, err := ua.ECDH(asPublic)
	if err != nil {
		return nil, fmt.Errorf("ecdh: %w", err)
	}
	keyInfo := "WebPush: info\x00" + string(ua.PublicKey().Bytes()) + string(asPublic.Bytes())
	ikm, err := hkdf.Key(sha256.New, secret, authSecret, keyInfo, 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	// The first record's nonce is the derived nonce XOR 0.
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	padded, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, errors.New("the record does not decrypt with the subscription's keys")
	}
	// Padding is zeros after the delimiter (RFC 8188 section 2).
	end := len(padded) - 1
	for end >= 0 && padded[end] == 0 {
		end--
	}
	if end < 0 || padded[end] != lastRecordDelimiter {
		return nil, errors.New("the record's padding does not end in the last record's delimiter")
	}
	return padded[:end], nil
}
