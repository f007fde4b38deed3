// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {SafeTransfer} from "./SafeTransfer.sol";

/// @title Vault
/// @notice Holds deposited tokens (forwarders sweep into it with plain ERC-20 transfers). Only the
/// operator fixed at deployment can move funds out, one `withdraw` at a time, each with an event.
/// There is no other way out: no owner change, no upgrade, no self-destruct, no native-coin entry.
contract Vault {
    address public immutable operator;

    event Withdrawn(address indexed token, address indexed to, uint256 amount);

    error NotOperator();
    error ZeroAddress();

    constructor(address operator_) {
        if (operator_ == address(0)) revert ZeroAddress();
        operator = operator_;
    }

    /// @notice Pays `amount` of `token` to `to` (a user's withdrawal).
    function withdraw(address token, address to, uint256 amount) external {
        if (msg.sender != operator) revert NotOperator();
        if (to == address(0)) revert ZeroAddress();
        emit Withdrawn(token, to, amount);
        SafeTransfer.safeTransfer(token, to, amount);
    }
}
