"""Cart, discount and invoice logic for the storefront."""
