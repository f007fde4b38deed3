// EVM personal_sign verification, synchronous. viem's verifyMessage loads its curve
// with a dynamic import on every call, which resolves on a later event-loop turn:
// nondeterministic under the simulator's scheduler and slower live. Same curve
// library (viem's own @noble/curves), same answers.
import { secp256k1 } from "@noble/curves/secp256k1"
import { hashMessage, hexToBytes } from "viem"
import { publicKeyToAddress } from "viem/accounts"

/** True when `signature` (65 bytes 0x-hex, v 27/28 or 0/1) by `address` signs `message` (EIP-191). */
export const verifyEvmMessage = (address: string, message: string, signature: string): boolean => {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return false
  try {
    const bytes = hexToBytes(signature as `0x${string}`)
    const v = bytes[64]!
    const recovery = v >= 27 ? v - 27 : v
    if (recovery !== 0 && recovery !== 1) return false
    const sig = secp256k1.Signature.fromCompact(bytes.subarray(0, 64)).addRecoveryBit(recovery)
    const point = sig.recoverPublicKey(hexToBytes(hashMessage(message)))
    return publicKeyToAddress(`0x${point.toHex(false)}`).toLowerCase() === address.toLowerCase()
  } catch {
    return false
  }
}
