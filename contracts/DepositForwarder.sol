// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "./IERC20.sol";
import {SafeTransfer} from "./SafeTransfer.sol";

/// @title DepositForwarder
/// @notice One per user, deployed by `ForwarderFactory` with CREATE2 at an address known in
/// advance, so tokens sent there before it exists are simply held by the address. Its only job is
/// to move its whole balance of a token to the vault fixed at deployment; since funds can go
/// nowhere else, anyone may trigger it. It holds no state and cannot receive native coin.
contract DepositForwarder {
    address public immutable vault;

    constructor(address vault_) {
        vault = vault_;
    }

    /// @notice Sends this forwarder's whole `token` balance to the vault; returns the amount.
    function sweep(address token) external returns (uint256 amount) {
        amount = IERC20(token).balanceOf(address(this));
        if (amount != 0) SafeTransfer.safeTransfer(token, vault, amount);
    }
}
