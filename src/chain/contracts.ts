// The committed contract artifacts (contracts/artifacts, built by `npm run build:contracts`) and
// the deposit-address derivation, which needs nothing but them and the deployed addresses.
import { encodeAbiParameters, getContractAddress, keccak256, pad, type Hex } from "viem"
import { depositForwarderAbi, forwarderFactoryAbi, usdgAbi, vaultAbi } from "../../contracts/artifacts/abis.ts"
import depositForwarderArtifact from "../../contracts/artifacts/DepositForwarder.json" with { type: "json" }
import forwarderFactoryArtifact from "../../contracts/artifacts/ForwarderFactory.json" with { type: "json" }
import usdgArtifact from "../../contracts/artifacts/USDG.json" with { type: "json" }
import vaultArtifact from "../../contracts/artifacts/Vault.json" with { type: "json" }
import type { Address } from "./chain.ts"

export { depositForwarderAbi, forwarderFactoryAbi, usdgAbi, vaultAbi }

export const usdgBytecode = usdgArtifact.bytecode as Hex
export const vaultBytecode = vaultArtifact.bytecode as Hex
export const depositForwarderBytecode = depositForwarderArtifact.bytecode as Hex
export const forwarderFactoryBytecode = forwarderFactoryArtifact.bytecode as Hex

/** The CREATE2 salt of `wallet`'s forwarder: bytes32(uint256(uint160(wallet))). */
export const forwarderSalt = (wallet: Address): Hex => pad(wallet.toLowerCase() as Hex, { size: 32 })

/** keccak256 of the forwarder's init code (creation code ++ abi.encode(vault)); ForwarderFactory.initCodeHash. */
export const forwarderInitCodeHash = (vault: Address): Hex =>
  keccak256(`${depositForwarderBytecode}${encodeAbiParameters([{ type: "address" }], [vault]).slice(2)}`)

/**
 * `wallet`'s deposit address: the CREATE2 address of its forwarder under `factory` (lowercase).
 * Pure; returns the same address as ForwarderFactory.addressOf(wallet) whether or not it is deployed.
 */
export const depositAddressOf = (factory: Address, initCodeHash: Hex, wallet: Address): Address =>
  getContractAddress({ opcode: "CREATE2", from: factory, salt: forwarderSalt(wallet), bytecodeHash: initCodeHash }).toLowerCase() as Address
